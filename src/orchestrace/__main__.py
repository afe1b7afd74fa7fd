"""``python -m orchestrace`` — same as the ``orchestrace`` command."""

from orchestrace.cli import main

if __name__ == "__main__":  # not when a spawned worker process imports it
    main()
