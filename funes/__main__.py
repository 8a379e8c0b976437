"""`python -m funes` runs the CLI."""

from funes.cli import main

if __name__ == "__main__":
    main()
