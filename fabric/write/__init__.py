"""Stage 7, write: rendered files into the output directory, atomically (staging directory, then one
exchange), secrets 0600.

In: rendered files. Out: the directory. The only stage besides the loader that touches files.
"""
