"""End-to-end tests: the command line run as a separate process (subprocess, pexpect)."""
