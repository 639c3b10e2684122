"""The sandbox: every piece of student code runs here, and only plain data comes back."""
