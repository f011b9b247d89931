"""Peer: the same rows from a msgspec script, what a user who knows msgspec would write.

The file read whole and decoded by msgspec into typed structs of only the fields the index uses
(floor.Document), then the selection of reference.rows on them (floor.rows). Unlike the floor
job it neither maps the file nor hashes it.

Example: python bench/msgspec_peer.py /tmp/snap/public/data/tasks/lm-arena-chat.json > rows.json
"""

from __future__ import annotations

import sys

import msgspec
from floor import Document, rows
from reference import write

if __name__ == "__main__":
    with open(sys.argv[1], "rb") as handle:
        document = msgspec.json.decode(handle.read(), type=Document)
    write(rows(document.configurations))
