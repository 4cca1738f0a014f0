"""The peer semfix is measured against: a straightforward libcst codemod doing SEM001's rewrite.

Run as `python -m libcst.tool codemod -x plain_codemod.PlainSemaphoreRead -j N --no-format DIR`
with this folder on PYTHONPATH. It is what one would write first: full parse, scope metadata
for every file, a matcher per call.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.codemod import VisitorBasedCodemodCommand
from libcst.metadata import QualifiedNameProvider, QualifiedNameSource

_POSITIONS = {
    "semaphore_signal": (0,),
    "semaphore_wait": (0,),
    "semaphore_read": (0,),
    "core_barrier": (0,),
    "make_async_copy": (2,),
    "async_copy": (2,),
    "make_async_remote_copy": (2, 3),
    "async_remote_copy": (2, 3),
}
_KEYWORDS = {"sem_or_view", "sem", "send_sem", "recv_sem"}
_PREFIXES = ("jax.experimental.pallas", "jax._src.pallas")


class PlainSemaphoreRead(VisitorBasedCodemodCommand):
    DESCRIPTION = "Pass the semaphore Ref instead of X[...] / X[()] to Pallas semaphore and DMA calls."
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        names = self.get_metadata(QualifiedNameProvider, original_node.func, set())
        function = None
        for name in names:
            short = name.name.rpartition(".")[2]
            if name.source is QualifiedNameSource.IMPORT and name.name.startswith(_PREFIXES) and short in _POSITIONS:
                function = short
        if function is None:
            return updated_node
        args = list(updated_node.args)
        for index, arg in enumerate(args):
            is_semaphore = (arg.keyword is None and index in _POSITIONS[function]) or (
                arg.keyword is not None and arg.keyword.value in _KEYWORDS
            )
            read = m.Subscript(slice=[m.SubscriptElement(slice=m.Index(value=m.Ellipsis() | m.Tuple(elements=[])))])
            if is_semaphore and m.matches(arg.value, read):
                target = arg.value.value  # type: ignore[attr-defined]
                if not m.matches(target, m.Attribute(attr=m.Name("at"))):
                    args[index] = arg.with_changes(value=target)
        return updated_node.with_changes(args=args)
