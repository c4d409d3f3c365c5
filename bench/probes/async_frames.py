# The async frames of a binary, largest first (bench/JOURNAL.md, 2026-11-28):
# python3 async_frames.py BINARY [COUNT] [NAME_FILTER]
# Every async function has an "async function pointer" (a symbol ending in `Tu`): a relative
# offset to its code, then the size of the frame (its initial context) the caller allocates in
# the task. A request in flight holds the frames of every async function it is suspended in, in
# the task allocator's 1,000-byte slabs, so a large frame on the request's path is memory per
# request. Needs readelf, nm and `swift demangle`.
import struct
import subprocess
import sys


def sections(binary):
    found = []
    for line in subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True, check=True).stdout.splitlines():
        parts = line.replace("[ ", "[").split()
        # Sections without bytes in the file (.bss, .tbss) hold no function pointers.
        if len(parts) > 6 and parts[0].startswith("[") and parts[2] not in ("NOBITS", "NULL"):
            try:
                found.append((int(parts[3], 16), int(parts[4], 16), int(parts[5], 16)))
            except ValueError:
                pass
    return found


def frames(binary):
    layout = sections(binary)
    with open(binary, "rb") as file:
        data = file.read()
    rows = []
    for line in subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout.splitlines():
        address, _, name = line.split(" ", 2)
        if not name.endswith("Tu"):
            continue
        where = int(address, 16)
        for start, offset, size in layout:
            if start <= where < start + size:
                rows.append((struct.unpack_from("<iI", data, offset + where - start)[1], name))
                break
    names = subprocess.run(
        ["swift", "demangle", "--simplified"], input="\n".join(name for _, name in rows), capture_output=True, text=True, check=True
    ).stdout.splitlines()
    return sorted(((size, name.removeprefix("async function pointer to ")) for (size, _), name in zip(rows, names)), reverse=True)


if __name__ == "__main__":
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    wanted = sys.argv[3] if len(sys.argv) > 3 else ""
    for size, name in [row for row in frames(sys.argv[1]) if wanted in row[1]][:count]:
        print(f"{size:6d}  {name}")
