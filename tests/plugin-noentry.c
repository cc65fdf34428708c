/* A shared object without memsim's entry: not a plugin. */
int not_a_plugin(int x);

int
not_a_plugin(int x)
{
	return x + 1;
}
