"""JAX's behaviour that tests/unit/test_pmap_*.cpp and test_grad_*.cpp check against: error wording
of pmap/vmap/grad and collective results. Run: XLA_FLAGS=--xla_force_host_platform_device_count=4
python3 tests/data/pmap_jax_reference.py > tests/data/pmap_jax_reference.txt"""
import os
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
import jax, jax.numpy as jnp, numpy as np
from jax import lax
jax.config.update("jax_enable_x64", True)
print("jax", jax.__version__)

def err(name, fn):
    try:
        fn()
        print(f"{name}: no error")
    except Exception as e:
        print(f"{name}: {type(e).__name__}: {str(e).splitlines()[0]}")

d = jax.devices()[:4]
x = np.arange(8.0).reshape(4, 2)
err("no mapped axis", lambda: jax.pmap(lambda a: a, in_axes=None)(x))
err("unbound axis", lambda: jax.pmap(lambda a: lax.psum(a, 'batch'), axis_name='i')(x))
err("leading size > devices", lambda: jax.pmap(lambda a: a)(np.arange(10.0).reshape(5, 2)))
err("leading size != devices given", lambda: jax.pmap(lambda a: a, devices=d[:2])(x))
err("in_axes not int", lambda: jax.pmap(lambda a: a, in_axes='a')(x))
err("inconsistent sizes", lambda: jax.pmap(lambda a, b: a + b[0])(x, np.arange(3.0)))
err("ppermute not unique", lambda: jax.pmap(lambda a: lax.ppermute(a, 'i', [(0, 1), (1, 1)]), axis_name='i')(x))
err("psum_scatter size", lambda: jax.pmap(lambda a: lax.psum_scatter(a, 'i'), axis_name='i')(x))
err("psum_scatter tiled size", lambda: jax.pmap(lambda a: lax.psum_scatter(a, 'i', tiled=True), axis_name='i')(np.arange(12.0).reshape(4, 3)))
err("grad non-scalar", lambda: jax.grad(lambda a: a * 2)(jnp.arange(3.0)))
err("grad int input", lambda: jax.grad(lambda a: a * 2)(jnp.int32(3)))
err("vmap no mapped", lambda: jax.vmap(lambda a: a, in_axes=None)(x))
err("vmap inconsistent", lambda: jax.vmap(lambda a, b: a + b)(x, np.arange(3.0)))
err("vmap out_axes None mapped", lambda: jax.vmap(lambda a: a, out_axes=None)(x))
err("pmax grad", lambda: jax.pmap(jax.grad(lambda a: lax.pmax(a, 'i').sum()), axis_name='i')(x))

def show(name, v):
    print(f"{name}: {np.asarray(v).tolist()}")
y = np.arange(8.0).reshape(4, 2) + 1
show("psum", jax.pmap(lambda a: lax.psum(a, 'i'), axis_name='i')(y))
show("x - psum", jax.pmap(lambda a: a - lax.psum(a, 'i'), axis_name='i')(y))
show("pmean", jax.pmap(lambda a: lax.pmean(a, 'i'), axis_name='i')(y))
show("pmax", jax.pmap(lambda a: lax.pmax(a, 'i'), axis_name='i')(y))
show("pmin", jax.pmap(lambda a: lax.pmin(a, 'i'), axis_name='i')(y))
show("axis_index", jax.pmap(lambda a: lax.axis_index('i'), axis_name='i')(y))
show("axis_size", jax.pmap(lambda a: a * lax.axis_size('i'), axis_name='i')(y))
show("all_gather", jax.pmap(lambda a: lax.all_gather(a, 'i'), axis_name='i')(y))
show("all_gather tiled", jax.pmap(lambda a: lax.all_gather(a, 'i', tiled=True), axis_name='i')(y))
show("all_gather axis=1", jax.pmap(lambda a: lax.all_gather(a, 'i', axis=1), axis_name='i')(y))
show("ppermute shift", jax.pmap(lambda a: lax.ppermute(a, 'i', [(j, (j + 1) % 4) for j in range(4)]), axis_name='i')(y))
show("ppermute partial", jax.pmap(lambda a: lax.ppermute(a, 'i', [(0, 2), (3, 1)]), axis_name='i')(y))
z = np.arange(32.0).reshape(4, 4, 2)
show("psum_scatter", jax.pmap(lambda a: lax.psum_scatter(a, 'i'), axis_name='i')(z))
show("psum_scatter tiled", jax.pmap(lambda a: lax.psum_scatter(a, 'i', tiled=True), axis_name='i')(np.arange(32.0).reshape(4, 8)))
show("psum_scatter dim1", jax.pmap(lambda a: lax.psum_scatter(a, 'i', scatter_dimension=1), axis_name='i')(np.arange(32.0).reshape(4, 2, 4)))
c = np.array([10.0, 20.0])
c4 = np.array([1.0, 2.0, 3.0, 4.0])
un = lambda f, v: jax.pmap(f, axis_name='i', in_axes=(0, None))(y, v)
show("unmapped psum", un(lambda a, b: lax.psum(b, 'i'), c))
show("unmapped pmean", un(lambda a, b: lax.pmean(b, 'i'), c))
show("unmapped pmax", un(lambda a, b: lax.pmax(b, 'i'), c))
show("unmapped all_gather", un(lambda a, b: lax.all_gather(b, 'i'), c))
show("unmapped ppermute", un(lambda a, b: lax.ppermute(b, 'i', [(0, 2)]), c))
show("unmapped psum_scatter", un(lambda a, b: lax.psum_scatter(b, 'i'), c4))
show("in_axes (0, None)", jax.pmap(lambda a, b: a * b, in_axes=(0, None))(y, np.array([10.0, 20.0])))
show("in_axes 1", jax.pmap(lambda a: a * 2, in_axes=1)(y.T))
show("out_axes 1", jax.pmap(lambda a: a * 2, out_axes=1)(y))
show("out_axes None", jax.pmap(lambda a: lax.psum(a, 'i'), axis_name='i', out_axes=None)(y))
show("out_axes None on a mapped output (JAX returns device 0's)", jax.pmap(lambda a: a * 2, out_axes=None)(y))
show("grad psum", jax.pmap(jax.grad(lambda a: lax.psum(a, 'i').sum()), axis_name='i')(y))
show("grad psum*a", jax.pmap(jax.grad(lambda a: (lax.psum(a, 'i') * a).sum()), axis_name='i')(y))
show("grad pmean", jax.pmap(jax.grad(lambda a: (lax.pmean(a, 'i') ** 2).sum()), axis_name='i')(y))
show("grad ppermute", jax.pmap(jax.grad(lambda a: (lax.ppermute(a, 'i', [(j, (j + 1) % 4) for j in range(4)]) * jnp.arange(2.0)).sum()), axis_name='i')(y))
show("grad all_gather", jax.pmap(jax.grad(lambda a: (lax.all_gather(a, 'i') ** 2).sum()), axis_name='i')(y))
show("grad max ties", jax.grad(lambda a: jnp.max(a))(jnp.array([1.0, 3.0, 3.0])))
show("grad maximum ties", jax.grad(lambda a: jnp.maximum(a, 2.0).sum())(jnp.array([1.0, 2.0, 3.0])))
show("grad abs at 0", jax.grad(lambda a: jnp.abs(a).sum())(jnp.array([-1.0, 0.0, 2.0])))
