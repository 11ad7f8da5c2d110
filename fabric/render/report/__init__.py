"""The design report: report.html (one self-contained file) and report.md (the same as text)."""
