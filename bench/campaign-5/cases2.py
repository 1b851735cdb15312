"""Campaign-5, second round: attribute lookups and call forms of tensor methods that Python allows."""
H = "import torch, operator, functools, inspect\n"
B = "def f(x):\n    y = x + 1\n"
CASES = {
 "class_level_add": H + "class A:\n    it = torch.Tensor.add\n" + B + "    return y * A.it(x, 1)\n",
 "tensorbase_dict_item": H + B + "    return y * torch._C.TensorBase.__dict__['item'](x.sum())\n",
 "vars_tensorbase_tolist": H + B + "    return y * len(vars(torch._C.TensorBase)['tolist'](x))\n",
 "vars_class_item": H + "class A:\n    it = torch.Tensor.item\n" + B + "    return y * vars(A)['it'](x.sum())\n",
 "getattr_concat_name": H + B + "    return y * getattr(x.sum(), 'it' + 'em')()\n",
 "getattr_static_item": H + B + "    t = x.sum()\n    return y * inspect.getattr_static(t, 'item')(t)\n",
 "bound_in_dict": H + B + "    d = {'f': x.sum().item}\n    return y * d['f']()\n",
 "bound_in_list": H + B + "    fs = [x.sum().item]\n    return y * fs[0]()\n",
 "getattr_tensor_class": H + B + "    return y * getattr(torch.Tensor, 'item')(x.sum())\n",
 "dunder_class_add": H + B + "    return y * x.__class__.add(x, 1)\n",
 "type_getattribute_dtype": H + B + "    return y * type(x).__getattribute__(x, 'dtype').itemsize\n",
 "descriptor_get_item": H + B + "    t = x.sum()\n    return y * torch.Tensor.item.__get__(t)()\n",
 "type_self_class_attr": H + "class A:\n    it = torch.Tensor.add\n    def g(self, t):\n        return type(self).it(t, 1)\n" + "a = A()\n" + B + "    return y * a.g(x)\n",
 "near_attrgetter_dtype": H + B + "    return y * operator.attrgetter('dtype')(x).itemsize\n",
 "near_attrgetter_shape": H + B + "    if operator.attrgetter('shape')(x)[0] > 2:\n        return y\n    return x\n",
 "near_dict_add": H + B + "    d = {'f': x.add}\n    return y * d['f'](1)\n",
 "near_type_add": H + B + "    return y * type(x).add(x, 1)\n",
 "near_tensorbase_dict_add": H + B + "    return y * torch._C.TensorBase.__dict__['add'](x, 1)\n",
 "near_staticmethod_add": H + "class A:\n    it = staticmethod(torch.Tensor.add)\n" + B + "    return y * A.it(x, 1)\n",
}
