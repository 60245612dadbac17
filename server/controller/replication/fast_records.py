"""Records and answers built from their fields in order, for bulk reassignments.

A bulk move of 10,000 partitions writes 10,000 PartitionChangeRecords that differ only in their
partition id, and answers 10,000 partitions without error. Built with keywords (the generated classes'
``__new__`` parses them, ~1.9 us each) that is two thirds of the whole decision's time; built as
tuples of their fields, ~0.3 us. So this module, and only it, builds these two classes positionally: a
record from a shared template (the fields after the id) and an accepted answer kept per index. The field
positions come from the classes' ``_fields`` when this module is imported, so a schema that reorders
them still builds correct objects (an id that is not a record's first field takes the slower keyword
path).
"""
from __future__ import annotations

from typing import NewType

from kraftwire.codec.messages import AlterPartitionReassignmentsResponse
from kraftwire.codec.records import PartitionChangeRecord

PartitionResponse = AlterPartitionReassignmentsResponse.ReassignablePartitionResponse

_new = tuple.__new__
_ID_FIRST = PartitionChangeRecord._fields[0] == "partition_id"
_ANSWER_FIELDS = ("partition_index", "error_code", "error_message", "unknown_tagged_fields")
_ANSWER_IN_ORDER = PartitionResponse._fields == _ANSWER_FIELDS

ChangeTemplate = NewType("ChangeTemplate", tuple)
"""A PartitionChangeRecord without its partition id: what partitions in the same state with the same
target share."""


if _ID_FIRST:
    def change_template(record: PartitionChangeRecord) -> ChangeTemplate:
        """What ``record`` says, less its partition id, to stamp on other partitions."""
        return ChangeTemplate(record[1:])

    def stamped_change(partition_id: int, template: ChangeTemplate) -> PartitionChangeRecord:
        """The record of ``template`` for partition ``partition_id``."""
        return _new(PartitionChangeRecord, (partition_id,) + template)
else:  # the slower, keyword path
    _AFTER_ID = tuple(f for f in PartitionChangeRecord._fields if f != "partition_id")

    def change_template(record: PartitionChangeRecord) -> ChangeTemplate:
        return ChangeTemplate(tuple(getattr(record, f) for f in _AFTER_ID))

    def stamped_change(partition_id: int, template: ChangeTemplate) -> PartitionChangeRecord:
        return PartitionChangeRecord(partition_id=partition_id, **dict(zip(_AFTER_ID, template)))


if _ANSWER_IN_ORDER:
    def partition_answer(index: int, error_code: int, error_message: str | None) -> PartitionResponse:
        """An AlterPartitionReassignments partition answer."""
        return _new(PartitionResponse, (index, error_code, error_message, ()))
else:
    def partition_answer(index: int, error_code: int, error_message: str | None) -> PartitionResponse:
        return PartitionResponse(partition_index=index, error_code=error_code, error_message=error_message)


class AcceptedAnswers(dict[int, PartitionResponse]):
    """The answer without error of each partition index (``ACCEPTED[index]``, a plain dict lookup once
    built). Answers are immutable, so every request shares them; only indexes of existing partitions are
    asked for (at most the largest topic's count)."""

    def __missing__(self, index: int) -> PartitionResponse:
        answer = self[index] = partition_answer(index, 0, None)
        return answer


ACCEPTED = AcceptedAnswers()
