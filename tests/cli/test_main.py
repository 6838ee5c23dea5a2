"""``toolfind``'s guard for its environment (``toolfind/__main__.py``), through the real entry
point in a subprocess: a stdout that cannot encode the text or cannot be written, a deleted
working directory, endless input files, Ctrl-C, junk in the environment."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toolfind.userfiles import NO_WORKING_DIR

WEATHER = [{"name": "weather_now", "description": "Current weather \u2014 temperature in \u2103."}]
FULL = "Error: cannot write the output: No space left on device\n"


def toolfind(
    *args: str, env: dict[str, str] | None = None, cwd: str | None = None, **kwargs: object
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolfind", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        check=False,
        timeout=120,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.fixture
def weather() -> str:
    Path("w.json").write_text(json.dumps(WEATHER), encoding="utf-8")
    return "w.json"


@pytest.mark.parametrize("encoding", ["latin-1", "ascii"])
def test_text_that_stdout_cannot_encode_degrades_to_replacement_characters(
    weather: str, encoding: str
) -> None:
    env = {"PYTHONIOENCODING": encoding}
    for args in (
        ["list", "-c", weather],
        ["search", "weather", "-c", weather],
        ["summaries", "--all", "-c", weather],
        ["show", "weather_now", "-c", weather],
        ["similar", "weather_now", "-c", weather],
        ["validate", weather],
    ):
        # show says which tool and where on stderr, as the stdout is its JSON document
        said = "w/weather_now\nw.json:1#/0\n" if args[0] == "show" else ""
        for _ in range(2):  # cold (Typer), then warm (the fast path where it answers)
            done = toolfind(*args, env=env)
            assert done.returncode == 0 and done.stderr == said, (args, done.stderr)
            if args[0] in ("list", "summaries", "search"):
                assert "Current weather ? temperature in ?." in done.stdout


@pytest.mark.parametrize("encoding", ["latin-1", "ascii"])
def test_json_that_stdout_cannot_encode_is_escaped(weather: str, encoding: str) -> None:
    env = {"PYTHONIOENCODING": encoding}
    for _ in range(2):
        done = toolfind("search", "weather", "-c", weather, "--json", env=env)
        assert done.returncode == 0 and done.stdout.isascii()
        assert "\\u2014" in done.stdout
        assert json.loads(done.stdout)["hits"][0]["description"] == WEATHER[0]["description"]
    done = toolfind("schemas", "-c", weather, env=env)
    assert json.loads(done.stdout)[0]["function"]["description"] == WEATHER[0]["description"]


def test_a_stdout_that_cannot_be_written_is_one_error_line(weather: str) -> None:
    with open("/dev/full", "w", encoding="utf-8") as full:
        for args in (
            ["search", "weather", "-c", weather, "--json"],  # cold: Typer
            ["search", "weather", "-c", weather, "--json"],  # warm: the fast path
            ["list", "-c", weather],
            ["schemas", "-c", weather],
            ["validate", weather],
        ):
            done = subprocess.run(
                [sys.executable, "-m", "toolfind", *args],
                stdout=full,
                stderr=subprocess.PIPE,
                text=True,
                check=False,
                timeout=120,
            )
            if "--json" in args:  # errors are JSON objects under --json
                assert done.returncode == 1, args
                assert json.loads(done.stderr) == {
                    "error": {
                        "message": "cannot write the output: No space left on device",
                        "kind": "error",
                    }
                }
            else:
                assert (done.returncode, done.stderr) == (1, FULL), args


def test_a_deleted_working_directory_works_with_absolute_paths_and_says_why_otherwise(
    tmp_path: Path, weather: str
) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    absolute = str(Path(weather).resolve())
    code = (
        "import os, sys, runpy; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]); "
        "sys.argv = ['toolfind', *sys.argv[2:]]; runpy.run_module('toolfind', run_name='__main__')"
    )

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", code, str(gone), *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )

    done = run("search", "weather", "-c", absolute, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hits"][0]["name"] == "weather_now"
    gone.mkdir()
    done = run("validate", absolute)
    assert done.returncode == 0 and "Traceback" not in done.stderr
    gone.mkdir()
    done = run("search", "weather", "-c", "w.json")
    assert (done.returncode, done.stderr) == (1, f"Error: {NO_WORKING_DIR}\n")


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["eval", "/dev/zero"], {}, "Error: /dev/zero: not a regular file (a device)\n"),
        (
            ["search", "--queries", "/dev/zero"],
            {},
            "Error: /dev/zero: cannot read queries: not a regular file (a device)\n",
        ),
        (
            ["search", "file"],
            {"TOOLFIND_CONFIG": "/dev/zero"},
            "Error: /dev/zero: cannot read config: not a regular file (a device)\n",
        ),
        (
            ["search", "file", "-c", ""],
            {},
            "Error: --catalog '': an empty path; give a catalog file or directory\n",
        ),
        (
            ["search", "file"],
            {"TOOLFIND_CATALOGS": ":::"},
            "Error: TOOLFIND_CATALOGS=':::' names no path; give catalog paths separated by "
            "':', or unset it\n",
        ),
    ],
)
def test_endless_or_empty_inputs_are_one_error_line(
    args: list[str], env: dict[str, str], message: str
) -> None:
    done = toolfind(*args, env=env)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", message)


def test_a_fifo_queries_file_is_refused_without_waiting_for_a_writer() -> None:
    os.mkfifo("q.yaml")
    done = toolfind("eval", "q.yaml")
    assert (done.returncode, done.stderr) == (1, "Error: q.yaml: not a regular file (a FIFO)\n")


@pytest.mark.skipif(not Path("/proc/self/syscall").exists(), reason="needs Linux /proc")
def test_ctrl_c_while_reading_queries_exits_130_without_a_traceback(weather: str) -> None:
    # A child inherits an ignored SIGINT (a suite started in the background by a shell without
    # job control, or by nohup) and then never sees Ctrl-C; a handled one is reset to default.
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "toolfind", "search", "--queries", "-", "-c", weather],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    finally:
        signal.signal(signal.SIGINT, inherited)
    try:
        # Wait until it blocks reading stdin (syscall 0 on x86-64: read, fd 0).
        syscall = f"/proc/{proc.pid}/syscall"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                words = Path(syscall).read_text(encoding="ascii").split()
            except OSError:
                words = []
            if words[:2] in (["0", "0x0"], ["63", "0x0"]):  # read(0, ...) on x86-64 / arm64
                break
            if proc.poll() is not None:
                break
        else:
            pytest.fail("never blocked on stdin")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert (out, err.splitlines()[-1]) == ("", "Interrupted.")


def test_junk_in_every_environment_variable_is_no_traceback(weather: str) -> None:
    junk = {
        "TOOLFIND_CACHE_DIR": "/dev/null/cache",
        "TOOLFIND_CONFIG": "",
        "TOOLFIND_NO_FASTPATH": "\u2603",
        "TOOLFIND_TOKEN": "\x01",
        "XDG_CACHE_HOME": "/dev/full",
        "HOME": "",
        "LOCALAPPDATA": "\x7f",
    }
    for args in (["search", "weather", "-c", weather, "--json"], ["cache", "info"], ["list"]):
        done = toolfind(*args, env=junk)
        assert "Traceback" not in done.stderr and done.returncode in (0, 1), (args, done.stderr)
    done = toolfind("search", "x", env={"TOOLFIND_CATALOGS": "\u2603:/dev/null"})
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and "Error: " in done.stderr
