"""The quiz engine: delivers a course's question banks (plain data, read by path).

Deliveries: graded (an nbgrader assignment, see quiz.notebooks and grading.quiz_answers),
self-check (``attention-course quiz take``, a hashed self-check file, a widgets notebook) and
LMS exports (GIFT, Canvas QTI 1.2, jupyterquiz JSON).
"""
