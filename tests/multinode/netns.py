"""Two "machines" for multinode tests: two network namespaces joined by a veth pair.

Created and removed by the test itself (root needed). Traffic stays inside the namespaces.
"""
import os
import subprocess


def sh(*cmd, check=True):
    return subprocess.run(list(cmd), check=check, capture_output=True, text=True)


class TwoMachines:
    """ns_a (the primary, IP_A) and ns_b (the secondary, IP_B) on one /24 over a veth pair."""

    def __init__(self, tag):
        n = os.getpid() % 100000
        self.ns_a, self.ns_b = f"tdm-{tag}-a{n}", f"tdm-{tag}-b{n}"
        self.if_a, self.if_b = f"tdma{n}", f"tdmb{n}"
        octet = 10 + n % 200
        self.ip_a, self.ip_b = f"10.213.{octet}.1", f"10.213.{octet}.2"

    def __enter__(self):
        self.remove()
        sh("ip", "netns", "add", self.ns_a)
        sh("ip", "netns", "add", self.ns_b)
        sh("ip", "link", "add", self.if_a, "type", "veth", "peer", "name", self.if_b)
        sh("ip", "link", "set", self.if_a, "netns", self.ns_a)
        sh("ip", "link", "set", self.if_b, "netns", self.ns_b)
        for ns, iface, ip in ((self.ns_a, self.if_a, self.ip_a), (self.ns_b, self.if_b, self.ip_b)):
            sh("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", iface)
            sh("ip", "-n", ns, "link", "set", iface, "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        return self

    def __exit__(self, *exc):
        self.remove()

    def kill_all(self, ns):
        pids = sh("ip", "netns", "pids", ns, check=False).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), 9)
            except OSError:
                pass

    def remove(self):
        for ns in (self.ns_a, self.ns_b):
            self.kill_all(ns)
            sh("ip", "netns", "del", ns, check=False)

    def popen(self, ns, cmd, env, log):
        """Starts `cmd` inside namespace `ns`."""
        return subprocess.Popen(["ip", "netns", "exec", ns, *cmd], env=env, stdout=log,
                                stderr=subprocess.STDOUT)

    def popen_piped(self, ns, cmd, stderr):
        """Starts `cmd` inside namespace `ns`; its stdout is a pipe of text lines to read."""
        return subprocess.Popen(["ip", "netns", "exec", ns, *cmd], stdout=subprocess.PIPE,
                                stderr=stderr, text=True, bufsize=1)

    def run_in(self, ns, cmd, timeout):
        return subprocess.run(["ip", "netns", "exec", ns, *cmd], capture_output=True, text=True,
                              timeout=timeout)
