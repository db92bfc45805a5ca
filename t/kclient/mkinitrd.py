#!/usr/bin/python3
"""Builds the kernel-client harness's initramfs (a gzipped newc cpio).

    mkinitrd.py KDIR OUT.gz

KDIR is a kernel unpacked by scripts/kclient-kernel.sh (KDIR/version,
KDIR/lib/modules/VER).  The image holds /init (t/kclient/init), the host's
static busybox, /dev/console, and the modules that mount the host's root
over virtio-9p under an overlay: virtio_pci, 9pnet_virtio, 9p, overlay and
what modules.dep says they need, decompressed (busybox's insmod takes plain
.ko files), with /modules/order listing them in load order.  Modules built
into the kernel (modules.builtin) are left out.
"""
import gzip
import lzma
import os
import stat
import sys

WANT = ["virtio_pci", "9pnet_virtio", "9p", "overlay"]
BUSYBOX = "/bin/busybox"


def module_table(mdir):
    deps, paths = {}, {}
    with open(os.path.join(mdir, "modules.dep")) as f:
        for line in f:
            path, _, rest = line.partition(":")
            name = os.path.basename(path).split(".ko")[0].replace("-", "_")
            paths[name] = path
            deps[name] = [os.path.basename(d).split(".ko")[0].replace("-", "_")
                          for d in rest.split()]
    builtin = set()
    with open(os.path.join(mdir, "modules.builtin")) as f:
        for line in f:
            builtin.add(os.path.basename(line.strip()).split(".ko")[0]
                        .replace("-", "_"))
    return deps, paths, builtin


def load_order(deps, builtin):
    order = []

    def add(m):
        if m in order or m in builtin:
            return
        if m not in deps:
            sys.exit("mkinitrd.py: no module %s in modules.dep" % m)
        # modules.dep lists every dependency, the one to load first last
        for d in reversed(deps[m]):
            add(d)
        order.append(m)

    for m in WANT:
        add(m)
    return order


class Cpio:
    def __init__(self):
        self.out = bytearray()
        self.ino = 1

    def add(self, name, mode, data=b"", rdev=(0, 0)):
        namez = name.encode() + b"\0"
        hdr = "070701" + "".join("%08x" % v for v in (
            self.ino, mode, 0, 0, 1, 0, len(data), 0, 0,
            rdev[0], rdev[1], len(namez), 0))
        self.ino += 1
        self.out += hdr.encode() + namez
        self.out += b"\0" * (-len(self.out) % 4)
        self.out += data
        self.out += b"\0" * (-len(self.out) % 4)

    def dir(self, name):
        self.add(name, stat.S_IFDIR | 0o755)

    def file(self, name, data, perm=0o644):
        self.add(name, stat.S_IFREG | perm, data)

    def end(self):
        self.add("TRAILER!!!", 0)
        return bytes(self.out)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    kdir, out = sys.argv[1], sys.argv[2]
    ver = open(os.path.join(kdir, "version")).read().strip()
    mdir = os.path.join(kdir, "lib/modules", ver)
    deps, paths, builtin = module_table(mdir)
    order = load_order(deps, builtin)

    c = Cpio()
    for d in ("bin", "sbin", "usr", "usr/bin", "usr/sbin", "dev", "proc",
              "sys", "lower", "upper", "newroot", "modules"):
        c.dir(d)
    c.add("dev/console", stat.S_IFCHR | 0o600, rdev=(5, 1))
    with open(BUSYBOX, "rb") as f:
        c.file("bin/busybox", f.read(), 0o755)
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "init"), "rb") as f:
        c.file("init", f.read(), 0o755)
    for m in order:
        with open(os.path.join(mdir, paths[m]), "rb") as f:
            data = f.read()
        if paths[m].endswith(".xz"):
            data = lzma.decompress(data)
        elif paths[m].endswith(".zst"):
            sys.exit("mkinitrd.py: zstd-compressed modules are not handled")
        c.file("modules/%s.ko" % m, data)
    c.file("modules/order", ("\n".join(order) + "\n").encode())
    with gzip.open(out, "wb", compresslevel=1) as f:
        f.write(c.end())


if __name__ == "__main__":
    main()
