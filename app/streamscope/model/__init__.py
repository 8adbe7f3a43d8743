"""The canonical model: stream events, the complete response, and the request.

It knows no protocol; the codecs map each protocol onto it.
"""
