"""Presenting grades: tables, the class report with its files and figure, feedback pages."""
