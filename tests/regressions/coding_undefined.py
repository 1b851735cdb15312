# coding: undefined
x = 1
