# coding: punycode
..-
