"""Headless Chromium for the HTML report tests, driven by Selenium (Debian's chromium and
chromium-driver packages; ``.ci/run`` installs them).

Outside CI a missing browser skips the browser tests with the reason; in CI (``CI`` set to
a true value, or ``CALIPER_REQUIRE_E2E=1``) it fails them, so a green CI run always means
the pages were opened in a real browser.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).parent / "artifacts"
"""Screenshots of each page type land here (git-ignored) so a person can look at them."""

CHROME_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,1000",
)


WAIT_FOR_ATTEMPTS = """
const done = arguments[arguments.length - 1];
if (!document.getElementById('attempt-data')) { done(true); return; }
attemptData().then(() => done(true), (err) => done(String(err)));
"""


def _required() -> bool:
    ci = os.environ.get("CI", "").strip().lower()
    return os.environ.get("CALIPER_REQUIRE_E2E") == "1" or ci in ("1", "true", "yes")


def find_browser() -> tuple[str | None, str | None]:
    """Paths of the chromium binary and its driver (``None`` where not installed)."""
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return binary, driver


def _missing_message(binary: str | None, driver: str | None) -> str | None:
    missing = [
        name for name, path in (("chromium", binary), ("chromium-driver", driver)) if not path
    ]
    if not missing:
        return None
    return (
        f"needs headless Chromium: {' and '.join(missing)} not installed "
        "(apt-get install -y chromium chromium-driver)"
    )


class Browser:
    """One headless Chromium session with a fresh profile."""

    def __init__(self, binary: str, driver: str, profile: Path):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = binary
        for flag in CHROME_FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={profile}")
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service(executable_path=driver), options=options)
        self.driver.set_page_load_timeout(120)

    def open(self, path: Path) -> float:
        """Load ``path`` (a local file) and return the seconds until its load event; then
        wait until the page's attempt data is unpacked (:meth:`wait_for_attempts`)."""
        start = time.monotonic()
        self.driver.get(path.resolve().as_uri())
        elapsed = time.monotonic() - start
        self.wait_for_attempts()
        return elapsed

    def wait_for_attempts(self) -> None:
        """Wait until the page's packed attempt data is unpacked (at once on a page without
        any), so a click on an attempt opens it before the click returns; fail if it cannot
        be unpacked."""
        result = self.driver.execute_async_script(WAIT_FOR_ATTEMPTS)
        assert result is True, f"the page's attempt data did not unpack: {result}"

    def console_errors(self) -> list[dict]:
        """Console entries of level SEVERE since the last call (errors, CSP violations)."""
        return [e for e in self.driver.get_log("browser") if e.get("level") == "SEVERE"]

    def alert_text(self) -> str | None:
        """The text of an open alert/confirm/prompt, or ``None`` (none was raised)."""
        from selenium.common.exceptions import NoAlertPresentException

        try:
            return self.driver.switch_to.alert.text
        except NoAlertPresentException:
            return None

    def screenshot(self, name: str) -> Path:
        """Save a full-page-height screenshot as ``artifacts/<name>.png``; return its path."""
        ARTIFACTS.mkdir(exist_ok=True)
        height = self.driver.execute_script(
            "return Math.min(document.documentElement.scrollHeight, 6000)"
        )
        self.driver.set_window_size(1400, max(int(height) + 40, 600))
        path = ARTIFACTS / f"{name}.png"
        self.driver.save_screenshot(str(path))
        self.driver.set_window_size(1400, 1000)
        return path

    def quit(self) -> None:
        """End the session (and the browser process it started)."""
        self.driver.quit()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """A headless Chromium for the module (skipped, or failed in CI, when not installed)."""
    binary, driver = find_browser()
    missing = _missing_message(binary, driver)
    if missing:
        if _required():
            pytest.fail(f"CI requires the browser tests to run, but caliper's tests {missing}")
        pytest.skip(missing)
    profile = Path(tempfile.mkdtemp(prefix="caliper-chromium-"))
    session = Browser(binary, driver, profile)
    try:
        yield session
    finally:
        session.quit()
        shutil.rmtree(profile, ignore_errors=True)
