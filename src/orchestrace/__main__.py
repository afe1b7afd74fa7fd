"""``python -m orchestrace`` — same as the ``orchestrace`` command."""

from orchestrace.cli import main

main()
