"""hook"""
