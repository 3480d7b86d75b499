"""What the benchmark scripts share: swift build's folder of binaries, an mtserver that runs for the length of a
`with` block (stopped with SIGTERM at its end, however the block ends), and the CPU of finished children."""
import contextlib
import json
import os
import resource
import subprocess


def build_dir(configuration):
    """The folder `swift build -c CONFIGURATION` puts its binaries in."""
    return subprocess.run(["swift", "build", "-c", configuration, "--show-bin-path"], capture_output=True, text=True,
                          check=True).stdout.strip()


def children_cpu():
    """User + system seconds of every child process waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@contextlib.contextmanager
def running_mtserver(binary, workdir, file_limit_mb=None, user=None, *extra):
    """Starts `mtserver --generate-key` (`binary`: its folder), with the account `user` and room for `file_limit_mb`
    of files where given; yields the JSON line it printed when ready (with its process id as "pid") and the path of
    its public key written into `workdir`."""
    options = (["--file-limit-mb", str(file_limit_mb)] if file_limit_mb is not None else []) + \
              (["--user", user] if user is not None else [])
    server = subprocess.Popen([os.path.join(binary, "mtserver"), "--generate-key", "--timeout", "3600", *options,
                               "--log-level", "error", *extra],
                              stdout=subprocess.PIPE, text=True)
    try:
        ready = json.loads(server.stdout.readline())
        ready["pid"] = server.pid
        keyfile = os.path.join(workdir, "key.pem")
        with open(keyfile, "w") as handle:
            handle.write(ready["public_key"])
        yield ready, keyfile
    finally:
        server.terminate()
        server.wait(10)
