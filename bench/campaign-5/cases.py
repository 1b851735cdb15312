"""Campaign-5 semantics cases: spellings of a tensor method call and their near misses."""
H = "import torch, operator, functools\n"
B = "def f(x):\n    y = x + 1\n"
CASES = {
 "methodcaller_alias": H + "mc = operator.methodcaller\n" + B + "    return y * mc('item')(x.sum())\n",
 "partial_tensor_item": H + B + "    return y * functools.partial(torch.Tensor.item, x.sum())()\n",
 "starred_call": H + B + "    a = (x.sum(),)\n    return y * torch.Tensor.item(*a)\n",
 "walrus_method": H + B + "    return y * (m := x.sum().item)()\n",
 "lambda_alias": H + B + "    g = lambda: x.sum().item()\n    return y * g()\n",
 "comprehension_item": H + B + "    return y * sum([t.item() for t in (x.sum(),)])\n",
 "nested_def": H + B + "    def g():\n        return x.sum().item()\n    return y * g()\n",
 "class_level_alias": H + "class A:\n    it = torch.Tensor.item\n" + B + "    return y * A.it(x.sum())\n",
 "call_chain": H + "class C:\n    def __call__(self, t):\n        return t.sum().item()\n" + B + "    return y * C().__call__(x)\n",
 "getattribute_sum": H + B + "    return y * x.__getattribute__('sum')()\n",
 "getattribute_dtype": H + B + "    return y * x.__getattribute__('dtype').itemsize\n",
 "dunder_complex": H + B + "    return y * x.sum().__complex__().real\n",
 "near_len_dunder": H + B + "    return y * x.__len__()\n",
 "near_walrus_add": H + B + "    return (m := x.add)(1) * y\n",
 "near_partial_add": H + B + "    return y * functools.partial(torch.Tensor.add, x)(1)\n",
 "near_nested_def_clean": H + B + "    def g():\n        return x.sum()\n    return y * g()\n",
 "near_getattribute_T": H + B + "    return y + x.__getattribute__('T')\n",
}
