"""Test support: writers of agents' native formats, fake agent CLIs, spool helpers."""
