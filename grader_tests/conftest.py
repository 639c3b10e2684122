"""The engine's grading plugin runs these graders on one submission (attention_course.grading)."""

from attention_course.grading.pytest_plugin import *  # noqa: F403
