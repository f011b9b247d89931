"""Disk and network: snapshot directories, GitHub and HTTP, local files read safely and written
atomically, the vendored snapshot."""
