"""Bring the loopback interface up (in a fresh network namespace it starts down), then exec the
given command. Stdlib only: no iproute2 needed."""

import fcntl
import os
import socket
import struct
import sys

SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1

with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
    req = struct.pack("16sH14s", b"lo", 0, b"")
    flags = struct.unpack("16sH14s", fcntl.ioctl(s.fileno(), SIOCGIFFLAGS, req))[1]
    fcntl.ioctl(s.fileno(), SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | IFF_UP, b""))
os.execvp(sys.argv[1], sys.argv[1:])
