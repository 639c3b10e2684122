"""The LMS: students launch the course's hub from Canvas or Moodle (LTI 1.3), and grades go
back to the LMS's gradebook (LTI Advantage's Assignment and Grade Services) or as a CSV its
gradebook imports.

- `config.py`: course.toml's `[lms]` table, the course's platform registration (schema);
- `identity.py`: a launch's claims -> the hub user and environment (no dependency);
- `files.py`: the instructor's LMS folder (the tool's key, the launches, what was pushed);
- `hub_auth.py`: the hub's authenticator (jupyterhub-ltiauthenticator, the `lti` extra);
- `scores.py`: what each student's grade is, as the LMS should get it;
- `ags.py`: `attention-course lms push` (pylti1p3, the `lti` extra);
- `csv_export.py`: Canvas's and Moodle's gradebook import files.
"""
