"""Runs Python callables inside a network namespace: a thread that entered it with setns(2)
(which moves only the calling thread), fed through a queue. For talking HTTP to servers that
listen on a namespace's address from the test process."""
import ctypes
import os
import queue
import threading

CLONE_NEWNET = 0x40000000


class NamespaceThread:
    def __init__(self, ns):
        self.ns = ns
        self.jobs = queue.Queue()
        ready = threading.Event()
        self.error = None

        def loop():
            try:
                libc = ctypes.CDLL("libc.so.6", use_errno=True)
                fd = os.open(f"/var/run/netns/{ns}", os.O_RDONLY)
                if libc.setns(fd, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), f"setns into {ns}")
                os.close(fd)
            except Exception as e:  # noqa: BLE001 - reported by run()
                self.error = e
            ready.set()
            while True:
                job = self.jobs.get()
                if job is None:
                    return
                f, box, done = job
                try:
                    box.append((True, f()))
                except BaseException as e:  # noqa: BLE001 - re-raised in the caller
                    box.append((False, e))
                done.set()

        self.thread = threading.Thread(target=loop, daemon=True)
        self.thread.start()
        ready.wait()

    def run(self, f):
        if self.error:
            raise self.error
        box, done = [], threading.Event()
        self.jobs.put((f, box, done))
        done.wait()
        ok, value = box[0]
        if not ok:
            raise value
        return value

    def close(self):
        self.jobs.put(None)
