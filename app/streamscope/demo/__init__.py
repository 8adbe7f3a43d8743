"""The embedded demo upstream: works offline, needs no key. (Its scenarios and replay
catalogue arrive with the demo-backend issue; ``standin`` is the minimal version.)"""
