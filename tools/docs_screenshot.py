"""Take the report picture of the README and the docs from a fresh audit, so that it never goes stale.

``make docs`` runs it before ``mkdocs build``: a small audit of the built-in model (gender, a few
hundred pairs, in a temp folder), then headless Chromium screenshots the axis' ``report.html``
into ``docs/img/report.png``. Without Chromium (``make chromium`` installs it where ``apt-get``
can) the committed picture is kept and a line on stderr says so; the build goes on.

    python tools/docs_screenshot.py                      # docs/img/report.png, 300 gender pairs
    python tools/docs_screenshot.py --pairs 40 --model builtin:echo --out /tmp/report.png
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: The picture the README and the docs show.
PICTURE = Path(__file__).resolve().parents[1] / "docs" / "img" / "report.png"
#: The browsers tried, in order, when ``--chromium`` is not given.
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: The window the report is drawn in: wide enough for the summary table, tall enough for the first charts.
WINDOW = "1100,1300"


def find_browser(given: str | None) -> str | None:
    """The Chromium to run: ``given`` (a path or a name on PATH), else the first of :data:`BROWSERS` found."""
    if given:
        return shutil.which(given) or (given if Path(given).is_file() else None)
    return next((found for name in BROWSERS if (found := shutil.which(name))), None)


def audit_report(folder: Path, *, model: str, n_pairs: int) -> Path:
    """Audit ``model`` on ``n_pairs`` gender pairs into ``folder``; the axis' ``report.html``."""
    import fairtalk

    fairtalk.audit(model=model, axes="gender", n_pairs=n_pairs, out_dir=folder / "report", store=folder / "store.sqlite")
    return folder / "report" / "gender" / "report.html"


def screenshot(browser: str, page: Path, out: Path) -> None:
    """Draw ``page`` in headless Chromium and write the picture to ``out``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    command = [
        browser,
        "--headless",
        "--no-sandbox",  # the docs are often built as root, in a container
        "--disable-gpu",
        "--hide-scrollbars",
        f"--window-size={WINDOW}",
        f"--screenshot={out}",
        page.resolve().as_uri(),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0 or not out.is_file():
        raise SystemExit(f"error: {browser} could not draw {page} (exit {done.returncode}):\n{done.stderr[-2000:]}")


def main(argv: list[str] | None = None) -> int:
    """Audit, draw, write; keep the committed picture when there is no browser."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=PICTURE, help="where to write the picture (default: %(default)s)")
    parser.add_argument("--model", default="builtin:minilm-retrieval", help="the model audited (default: %(default)s)")
    parser.add_argument("--pairs", type=int, default=300, help="gender pairs audited (default: %(default)s)")
    parser.add_argument(
        "--chromium", default=None, help=f"the browser to draw with (default: the first of {', '.join(BROWSERS)})"
    )
    args = parser.parse_args(argv)
    browser = find_browser(args.chromium)
    if browser is None:
        print(f"docs_screenshot: no Chromium found (make chromium); kept {args.out} as it is", file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory(prefix="fairtalk-docs-") as tmp:
        page = audit_report(Path(tmp), model=args.model, n_pairs=args.pairs)
        screenshot(browser, page, args.out)
    print(f"docs_screenshot: wrote {args.out} ({args.pairs} gender pairs, {args.model})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
