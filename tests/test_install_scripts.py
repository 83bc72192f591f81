"""The install scripts' own logic, on copies in a temporary checkout with stand-ins for npm, pip
and ldconfig (no network, nothing of the real checkout touched): two Task Library installs at once
install once; a half-installed web/node_modules is made again."""

import os
import shutil
import stat
import subprocess

from glue_test_data import REPO


def _executable(path, text):
    path.write_text("#!/usr/bin/env bash\n" + text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _checkout_copy(tmp_path, *names):
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(os.path.join(REPO, name), tmp_path / name)


def test_two_task_library_installs_at_once_install_once(tmp_path):
    _checkout_copy(tmp_path, "bench/install_task_library.sh", "bench/task_library_requirements.txt")
    tools = tmp_path / "tools"
    tools.mkdir()
    _executable(tools / "ldconfig", 'echo "libusb-1.0.so.0 (libc6,x86-64) => /lib/libusb-1.0.so.0"\n')
    # `python -m venv DIR`: a pip that takes a second and logs, a python whose import works once pip is done.
    _executable(tools / "python", f"""[ "$1 $2" = "-m venv" ] || exit 1
mkdir -p "$3/bin"
printf '#!/usr/bin/env bash\\necho pip >> {tmp_path}/log; sleep 1; touch "$(dirname "$0")/done"\\n' > "$3/bin/pip"
printf '#!/usr/bin/env bash\\n[ -e "$(dirname "$0")/done" ]\\n' > "$3/bin/python"
chmod +x "$3/bin/pip" "$3/bin/python"
""")
    env = dict(os.environ, PATH=f"{tools}:{os.environ['PATH']}", TASK_LIBRARY_PYTHON=str(tools / "python"))
    script = str(tmp_path / "bench" / "install_task_library.sh")
    runs = [subprocess.Popen(["bash", script], env=env, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [(run.wait(timeout=60), run.stderr.read()) for run in runs]
    assert results == [(0, ""), (0, "")]
    assert (tmp_path / "log").read_text() == "pip\n"
    assert (tmp_path / ".venv-tflite-support" / "installed_requirements.txt").exists()


def test_a_half_installed_node_modules_is_installed_again(tmp_path):
    _checkout_copy(tmp_path, "web/install_browser.sh", "web/served_files.txt", "web/index.html", "web/page.js",
                   "web/page.css")
    web = tmp_path / "web"
    served = [line for line in (web / "served_files.txt").read_text().splitlines()
              if line.startswith("node_modules/")]
    tools = tmp_path / "tools"
    tools.mkdir()
    # npm: `ls` finds every package (as it does when their files were deleted); `ci` logs and installs.
    listing = " ".join(f"'{name}'" for name in served)
    _executable(tools / "npm", f"""[ "$1" = ls ] && exit 0
echo "$1" >> {tmp_path}/log
for name in {listing}; do mkdir -p "$(dirname "$name")"; touch "$name"; done
""")
    for tool in ("chromium", "node"):
        _executable(tools / tool, "")
    env = dict(os.environ, PATH=f"{tools}:{os.environ['PATH']}")

    def install():
        subprocess.run(["bash", str(web / "install_browser.sh")], env=env, check=True)
        return (tmp_path / "log").read_text().split() if (tmp_path / "log").exists() else []

    assert install() == ["ci"]  # nothing installed
    assert install() == ["ci"]  # all there: npm ci is not run again
    os.remove(web / served[-1])  # a WebAssembly file gone
    assert install() == ["ci", "ci"]
    assert all((web / name).is_file() for name in served)
