"""The command flows: each composes the steps, the documents and the I/O for one command."""
