"""Bot submissions over the server (issue 15 §3): an archive checked and taken in
(:mod:`.archive`, :mod:`.accept`), built and checked as a background job
(:mod:`.pipeline`), and the ``arena submit`` client (:mod:`.client`)."""

from __future__ import annotations

from leaderboard.store import SubmissionLimitError

from .accept import Submission, accept, accept_async, archive_path, submission_json
from .archive import ArchiveError, ArchiveLimits, check_archive, format_of, unpack

__all__ = ["ArchiveError", "ArchiveLimits", "Submission", "SubmissionLimitError", "accept",
           "accept_async", "archive_path", "check_archive", "format_of", "submission_json",
           "unpack"]
