"""Watching what a listener answers: its handler table is copied with one handler wrapped, so a test
sees each response that handler produces (the shared handler tables are never changed)."""
import inspect


def watch_answers(listener, api_key: int, seen) -> None:
    """Call ``seen(response)`` with every answer ``listener`` gives to ``api_key``; run on the cluster's loop."""
    handle = listener.handlers[api_key]

    def watched(context, request):
        result = handle(context, request)
        if not inspect.isawaitable(result):
            seen(result)
            return result

        async def answered():
            response = await result
            seen(response)
            return response
        return answered()

    listener.handlers = {**listener.handlers, api_key: watched}
