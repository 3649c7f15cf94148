-- Lua workload for bench/run: table-heavy and numeric code (sieve,
-- fannkuch, n-body, string building, sorting), deterministic output.
local scale = tonumber(arg and arg[1]) or 1

local function sieve(n)
  local composite, count = {}, 0
  for i = 2, n do
    if not composite[i] then
      count = count + 1
      for j = i * i, n, i do composite[j] = true end
    end
  end
  return count
end

local function fannkuch(n)
  local perm, perm1, count = {}, {}, {}
  local maxflips, checksum, r, permcount = 0, 0, n, 0
  for i = 0, n - 1 do perm1[i] = i end
  while true do
    while r ~= 1 do count[r - 1] = r; r = r - 1 end
    for i = 0, n - 1 do perm[i] = perm1[i] end
    local flips, k = 0, perm[0]
    while k ~= 0 do
      local i, j = 0, k
      while i < j do perm[i], perm[j] = perm[j], perm[i]; i = i + 1; j = j - 1 end
      flips = flips + 1
      k = perm[0]
    end
    if flips > maxflips then maxflips = flips end
    checksum = checksum + (permcount % 2 == 0 and flips or -flips)
    while true do
      if r == n then return checksum, maxflips end
      local p0 = perm1[0]
      for i = 0, r - 1 do perm1[i] = perm1[i + 1] end
      perm1[r] = p0
      count[r] = count[r] - 1
      if count[r] > 0 then break end
      r = r + 1
    end
    permcount = permcount + 1
  end
end

local function nbody(steps)
  local bodies = {
    {x=0,y=0,z=0,vx=0,vy=0,vz=0,m=39.47841760435743},
    {x=4.84,y=-1.16,z=-0.10,vx=0.606,vy=2.81,vz=-0.02,m=0.037},
    {x=8.34,y=4.12,z=-0.40,vx=-1.01,vy=1.82,vz=0.008,m=0.011},
    {x=12.89,y=-15.11,z=-0.22,vx=1.08,vy=0.868,vz=-0.01,m=0.0017},
    {x=15.37,y=-25.91,z=0.179,vx=0.979,vy=0.594,vz=-0.034,m=0.002},
  }
  local dt = 0.01
  for _ = 1, steps do
    for i = 1, #bodies do
      local bi = bodies[i]
      for j = i + 1, #bodies do
        local bj = bodies[j]
        local dx, dy, dz = bi.x - bj.x, bi.y - bj.y, bi.z - bj.z
        local d2 = dx * dx + dy * dy + dz * dz
        local mag = dt / (d2 * math.sqrt(d2))
        bi.vx = bi.vx - dx * bj.m * mag; bj.vx = bj.vx + dx * bi.m * mag
        bi.vy = bi.vy - dy * bj.m * mag; bj.vy = bj.vy + dy * bi.m * mag
        bi.vz = bi.vz - dz * bj.m * mag; bj.vz = bj.vz + dz * bi.m * mag
      end
    end
    for _, b in ipairs(bodies) do
      b.x = b.x + dt * b.vx; b.y = b.y + dt * b.vy; b.z = b.z + dt * b.vz
    end
  end
  return string.format("%.9f %.9f", bodies[1].x, bodies[2].y)
end

local function strings(n)
  local parts = {}
  for i = 1, n do parts[#parts + 1] = string.format("%d:%s", i, string.rep("ab", i % 7)) end
  local s = table.concat(parts, ",")
  local hits = 0
  for w in s:gmatch("%d+:abab") do hits = hits + 1 end
  return #s, hits, (s:gsub("ab", "x")):len()
end

local function sorting(n)
  local t, seed = {}, 12345
  for i = 1, n do seed = (seed * 1103515245 + 12345) % 2147483648; t[i] = seed end
  table.sort(t)
  return t[1], t[n // 2], t[n]
end

for _ = 1, scale do
  print("sieve", sieve(3000000))
  print("fannkuch", fannkuch(9))
  print("nbody", nbody(300000))
  print("strings", strings(300000))
  print("sort", sorting(400000))
end
