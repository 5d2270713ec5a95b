"""presence"""
