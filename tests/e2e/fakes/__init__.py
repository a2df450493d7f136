"""Fake servers on 127.0.0.1 for end-to-end tests with the real client libraries."""
