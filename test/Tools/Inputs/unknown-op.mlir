dist.frobnicate @m
