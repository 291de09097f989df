"""Co-scheduling theory (Kuchumov & Korkhov 2021): the model of §3, the optimal schedule
(§4.1, LP (3)), the online FCS strategy (§4.2, Listing 1), the stochastic search strategies
(§5, :mod:`coburst.theory.search`), the §8 instance generator, Example 1's family, the JSON
layout of instances and answers, and a worst-case search for any strategy; and, for the
co-scheduling work on node-sharing clusters, a lower bound on the makespan of any schedule
(:mod:`.cosched_bound`: the fluid LP over compact, alone and paired half-node time).

Modules: :mod:`.model`, :mod:`.opt`, :mod:`.fcs`, :mod:`.exact`, :mod:`.generate`,
:mod:`.io`, :mod:`.worst_case`, :mod:`.search`, :mod:`.cosched_bound`.
"""
