"""Hostile inputs and faults: each test fails without the fix it guards (issue 18)."""
