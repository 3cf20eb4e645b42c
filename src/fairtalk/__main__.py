"""``python -m fairtalk``: the ``fairtalk`` command, for an environment whose scripts are not on PATH."""

from fairtalk.cli import main

if __name__ == "__main__":
    main()
