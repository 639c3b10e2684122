"""The quiz module: question banks (a course's plain data, read by path) and the engine that delivers them.

Deliveries: graded (an nbgrader assignment, see attention_course.quiz.notebooks and grading.quiz_answers),
self-check (``attention-course quiz take``, a hashed self-check file, a widgets notebook) and
LMS exports (GIFT, Canvas QTI 1.2, jupyterquiz JSON).
"""
