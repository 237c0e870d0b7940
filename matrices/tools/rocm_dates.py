"""Release dates of every ROCm release in rocm.json, from one named source (#42): AMD's release
history, ROCm/rocm-docs docs/release/versions.rst @ 9bcf25db1e77 (rendered at
https://rocm.docs.amd.com/en/latest/release/versions.html), read 2026-12-07. PRINTED keeps each date
as the page prints it (its month names, abbreviated for 6.1.0 and older); build_rocm.py writes them
as ISO dates and tests/test_matrices_consistency.py checks that every release_date is this page's.
"""

from __future__ import annotations

import datetime

SOURCE = (
    "ROCm/rocm-docs docs/release/versions.rst @ 9bcf25db1e77f58b435fe162baaa99566bac0189 (AMD's 'ROCm release "
    "history', https://rocm.docs.amd.com/en/latest/release/versions.html), read 2026-12-07"
)

PRINTED = {
    "10.1.0": "October 5, 2026",
    "10.0.0": "August 26, 2026",
    "7.14.1": "September 2, 2026",
    "7.14.0": "July 15, 2026",
    "7.2.4": "May 29, 2026",
    "7.2.3": "May 4, 2026",
    "7.2.2": "April 14, 2026",
    "7.2.1": "March 25, 2026",
    "7.2.0": "January 21, 2026",
    "7.1.1": "November 26, 2025",
    "7.1.0": "October 30, 2025",
    "7.0.2": "October 10, 2025",
    "7.0.1": "September 17, 2025",
    "7.0.0": "September 16, 2025",
    "6.4.3": "August 7, 2025",
    "6.4.2": "July 21, 2025",
    "6.4.1": "May 21, 2025",
    "6.4.0": "April 11, 2025",
    "6.3.3": "February 19, 2025",
    "6.3.2": "January 28, 2025",
    "6.3.1": "December 20, 2024",
    "6.3.0": "December 3, 2024",
    "6.2.4": "November 6, 2024",
    "6.2.2": "September 27, 2024",
    "6.2.1": "September 20, 2024",
    "6.2.0": "August 2, 2024",
    "6.1.5": "March 13, 2025",
    "6.1.2": "June 4, 2024",
    "6.1.1": "May 8, 2024",
    "6.1.0": "Apr 16, 2024",
    "6.0.2": "Jan 31, 2024",
    "6.0.0": "Dec 15, 2023",
    "5.7.1": "Oct 13, 2023",
    "5.7.0": "Sep 15, 2023",
    "5.6.1": "Aug 29, 2023",
    "5.6.0": "Jun 28, 2023",
    "5.5.1": "May 24, 2023",
    "5.5.0": "May 1, 2023",
    "5.4.3": "Feb 7, 2023",
    "5.4.2": "Jan 13, 2023",
    "5.4.1": "Dec 15, 2022",
    "5.4.0": "Nov 30, 2022",
    "5.3.3": "Nov 17, 2022",
    "5.3.2": "Nov 9, 2022",
    "5.3.0": "Oct 4, 2022",
    "5.2.3": "Aug 18, 2022",
    "5.2.1": "Jul 21, 2022",
    "5.2.0": "Jun 28, 2022",
    "5.1.3": "May 20, 2022",
    "5.1.1": "Apr 8, 2022",
    "5.1.0": "Mar 30, 2022",
    "5.0.2": "Mar 4, 2022",
    "5.0.1": "Feb 16, 2022",
    "5.0.0": "Feb 9, 2022",
}


def iso(version: str) -> str:
    """The release date AMD's history prints for ``version``, as YYYY-MM-DD."""
    text = PRINTED[version]
    for fmt in ("%B %d, %Y", "%b %d, %Y"):
        try:
            return datetime.datetime.strptime(text, fmt).date().isoformat()
        except ValueError:
            continue
    raise ValueError(f"{version}: {text!r} is no date")
