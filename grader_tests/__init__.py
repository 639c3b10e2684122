"""Hidden graders and the reference implementation. Never released to students."""
