"""`make bench`: funes' recall quality, speed and size, measured side by side in one run.

Run it as `python -m bench [--quick] [--devset DIR]`; see bench/README.md for each figure.
"""
