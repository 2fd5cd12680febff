// placeholder while building
