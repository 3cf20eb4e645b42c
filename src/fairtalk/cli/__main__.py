"""``python -m fairtalk.cli``."""

from fairtalk.cli import main

main()
