"""Sharing: export a memory to Lance and sync it with a Hugging Face dataset (or a directory)."""
