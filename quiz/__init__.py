"""The quiz module: question banks (plain data under quiz/banks/) and the engine that delivers them.

Deliveries: graded (an nbgrader assignment, see quiz.notebooks and quiz.nbgrader_grading),
self-check (``attention-course quiz take``, a hashed self-check file, a widgets notebook) and
LMS exports (GIFT, Canvas QTI 1.2, jupyterquiz JSON).
"""
